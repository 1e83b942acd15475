import type { NextFunction, Request, Response } from 'express';
import { formatPrice, type ProductModel } from '../models/product.js';
import { renderPage } from '../views/engine.js';

export class ProductsController {
  constructor(private readonly products: ProductModel) {}

  index = async (req: Request, res: Response): Promise<void> => {
    renderPage(req, res, 'products/index', {
      title: 'Products',
      products: await this.products.list(),
      formatPrice,
    });
  };

  show = async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const product = await this.products.findBySlug(String(req.params.slug));
    if (!product) {
      next(); // falls through to the 404 page
      return;
    }
    renderPage(req, res, 'products/show', { title: product.name, product, formatPrice });
  };
}
