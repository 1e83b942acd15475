import type { Request, Response } from 'express';
import { formatPrice, type ProductModel } from '../models/product.js';
import { renderPage } from '../views/engine.js';

export class HomeController {
  constructor(private readonly products: ProductModel) {}

  index = async (req: Request, res: Response): Promise<void> => {
    const products = await this.products.list();
    renderPage(req, res, 'home', {
      title: 'Home',
      featured: products.slice(0, 3),
      productCount: products.length,
      formatPrice,
    });
  };
}
